// Where the extension's own bundles are: the reader, the CLI and the debug adapter all live in its dist/.

import * as path from 'node:path';

export interface ExtensionPaths {
  readonly root: string;
  readonly reader: string;
  readonly cli: string;
  readonly debugAdapter: string;
  readonly media: string;
  readonly examples: string;
}

export function extensionPaths(root: string): ExtensionPaths {
  return {
    root,
    reader: path.join(root, 'dist', 'readerMain.js'),
    cli: path.join(root, 'dist', 'cli.js'),
    debugAdapter: path.join(root, 'dist', 'debugAdapter.js'),
    media: path.join(root, 'media'),
    examples: path.join(root, 'examples'),
  };
}
