// Where tools that are slow to build or download are cached outside the clone, keyed by exact versions, so a fresh
// clone on the same machine reuses them: $LOGBOOK_CACHE, else $XDG_CACHE_HOME/agent-logbook, else ~/.cache/agent-logbook.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export function cacheRoot() {
  if (process.env.LOGBOOK_CACHE) return path.resolve(process.env.LOGBOOK_CACHE);
  return path.join(process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'), 'agent-logbook');
}

/**
 * Makes `link` (an ignored folder in the clone) point at `<cache root>/<name>`, unless it already exists as a real
 * folder (then it is used as it is). Returns the folder to use.
 */
export function linkedCache(link, name) {
  if (fs.existsSync(link)) return link;
  const target = path.join(cacheRoot(), name);
  fs.mkdirSync(target, { recursive: true });
  fs.mkdirSync(path.dirname(link), { recursive: true });
  try {
    fs.symlinkSync(target, link, 'dir');
  } catch (err) {
    if (err.code !== 'EEXIST') throw err;
  }
  return link;
}
