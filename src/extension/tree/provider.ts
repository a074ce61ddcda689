// The TreeDataProvider: hands VS Code the model's cached nodes and forwards the model's change events.

import * as vscode from 'vscode';
import type { TreeModel } from './treeModel';
import type { Node } from './nodes';
import { treeItem } from './render';

export class RunsTreeProvider implements vscode.TreeDataProvider<Node>, vscode.Disposable {
  private readonly emitter = new vscode.EventEmitter<Node | Node[] | undefined>();
  readonly onDidChangeTreeData = this.emitter.event;
  private readonly sub: { dispose(): void };

  constructor(private readonly model: TreeModel) {
    this.sub = model.onChange((nodes) => {
      if (nodes.includes(undefined)) this.emitter.fire(undefined);
      else this.emitter.fire(nodes.filter((n): n is Node => n !== undefined));
    });
  }

  getTreeItem(node: Node): vscode.TreeItem {
    return treeItem(node);
  }

  getChildren(node?: Node): Promise<Node[]> {
    return this.model.children(node);
  }

  getParent(node: Node): Node | undefined {
    return this.model.getParent(node);
  }

  dispose(): void {
    this.sub.dispose();
    this.emitter.dispose();
  }
}
