// Smoke extension for the VS Code e2e harness: registers `smoke.hello` and an inline `smoke-debug` debug adapter.
const vscode = require('vscode');

/** Minimal inline debug adapter: enough of the DAP for a session to start and end cleanly. */
class SmokeDebugAdapter {
  constructor() {
    this.emitter = new vscode.EventEmitter();
    this.onDidSendMessage = this.emitter.event;
    this.seq = 1;
  }

  send(msg) {
    this.emitter.fire({ seq: this.seq++, ...msg });
  }

  respond(request, body = {}) {
    this.send({ type: 'response', request_seq: request.seq, command: request.command, success: true, body });
  }

  handleMessage(msg) {
    if (msg.type !== 'request') return;
    switch (msg.command) {
      case 'initialize':
        this.respond(msg, { supportsConfigurationDoneRequest: true });
        this.send({ type: 'event', event: 'initialized' });
        break;
      case 'configurationDone':
        this.respond(msg);
        setTimeout(() => this.send({ type: 'event', event: 'terminated' }), 200);
        break;
      case 'threads':
        this.respond(msg, { threads: [{ id: 1, name: 'smoke' }] });
        break;
      default: // launch, disconnect and anything else: plain success
        this.respond(msg);
    }
  }

  dispose() {
    this.emitter.dispose();
  }
}

function activate(context) {
  context.subscriptions.push(
    vscode.commands.registerCommand('smoke.hello', (name = 'world') => `hello ${name}`),
    vscode.debug.registerDebugAdapterDescriptorFactory('smoke-debug', {
      createDebugAdapterDescriptor: () => new vscode.DebugAdapterInlineImplementation(new SmokeDebugAdapter()),
    }),
  );
  return { activatedAt: Date.now() };
}

function deactivate() {}

module.exports = { activate, deactivate };
