// The Logbook debug adapter: DAP on stdin/stdout, or `--server=PORT` for development and other clients.

import { DebugSession } from '@vscode/debugadapter';
import { LogbookDebugSession } from './debugSession';

DebugSession.run(LogbookDebugSession);
