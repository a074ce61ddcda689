/* The power-loss harness's recording VFS: a SQLite loadable extension that wraps the default VFS and logs every write, truncate, sync and delete. */

/*
 * Loaded once (better-sqlite3's loadExtension), it registers itself as the default VFS, so every later connection
 * of the process goes through it. It only observes: each call is passed to the real VFS, and what succeeded is
 * appended to a binary log (see test/powerloss/log.ts for the layout) with write(2), so the log's order is the
 * order of the calls. The io methods are version 2, without xFetch: SQLite cannot memory-map a file through them,
 * so no write to the database bypasses the log. Controlled through the SQL function powerloss_ctl(command, arg)
 * on the connection that loaded it.
 */
#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT1
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { REC_OPEN = 1, REC_WRITE = 2, REC_TRUNC = 3, REC_SYNC = 4, REC_DELETE = 5, REC_MARK = 6, REC_DIRSYNC = 7, REC_CLOSE = 8 };

typedef struct RecFile {
  sqlite3_file base;
  sqlite3_file *real; /* the real VFS's file, in the memory right after this struct */
  int id;             /* 0: not recorded */
  int dirSyncPending; /* created as a journal or WAL: the real VFS syncs the directory on its first sync */
} RecFile;

static sqlite3_vfs *realVfs;
static sqlite3_vfs recVfs;
static int logFd = -1;
static char prefix[4096];
static int nextId = 1;
static long failSyncAt = 0; /* the n-th recorded sync from the command on fails (0: none) */
static long syncsSeen = 0;
static long failWriteAt = 0; /* from the n-th recorded write from the command on, every write fails: a full disk (0: none) */
static long writesSeen = 0;
static int dropSyncs = 0;

static void logRecord(int type, int id, int64_t a, const void *data, uint32_t len) {
  if (logFd < 0) return;
  unsigned char head[17];
  head[0] = (unsigned char)type;
  memcpy(head + 1, &id, 4);
  memcpy(head + 5, &a, 8);
  memcpy(head + 13, &len, 4);
  /* One writev-like buffer so a record is never interleaved; the log is the harness's, not the journal's. */
  size_t total = sizeof head + len;
  unsigned char *buf = malloc(total);
  if (!buf) return;
  memcpy(buf, head, sizeof head);
  if (len) memcpy(buf + sizeof head, data, len);
  size_t off = 0;
  while (off < total) {
    ssize_t n = write(logFd, buf + off, total - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    off += (size_t)n;
  }
  free(buf);
}

static int tracked(const char *name) {
  return logFd >= 0 && name && prefix[0] && strncmp(name, prefix, strlen(prefix)) == 0;
}

static int recClose(sqlite3_file *f) {
  RecFile *p = (RecFile *)f;
  int rc = p->real->pMethods ? p->real->pMethods->xClose(p->real) : SQLITE_OK;
  if (p->id) logRecord(REC_CLOSE, p->id, 0, 0, 0);
  return rc;
}
static int recRead(sqlite3_file *f, void *buf, int amt, sqlite3_int64 off) {
  RecFile *p = (RecFile *)f;
  return p->real->pMethods->xRead(p->real, buf, amt, off);
}
static int recWrite(sqlite3_file *f, const void *buf, int amt, sqlite3_int64 off) {
  RecFile *p = (RecFile *)f;
  if (p->id) {
    writesSeen++;
    if (failWriteAt && writesSeen >= failWriteAt) return SQLITE_FULL;
  }
  int rc = p->real->pMethods->xWrite(p->real, buf, amt, off);
  if (rc == SQLITE_OK && p->id) logRecord(REC_WRITE, p->id, off, buf, (uint32_t)amt);
  return rc;
}
static int recTruncate(sqlite3_file *f, sqlite3_int64 size) {
  RecFile *p = (RecFile *)f;
  int rc = p->real->pMethods->xTruncate(p->real, size);
  if (rc == SQLITE_OK && p->id) logRecord(REC_TRUNC, p->id, size, 0, 0);
  return rc;
}
static int recSync(sqlite3_file *f, int flags) {
  RecFile *p = (RecFile *)f;
  if (!p->id) return p->real->pMethods->xSync(p->real, flags);
  syncsSeen++;
  if (failSyncAt && syncsSeen == failSyncAt) {
    logRecord(REC_MARK, 0, 0, "fsync-failed", 12);
    return SQLITE_IOERR_FSYNC;
  }
  if (dropSyncs) return SQLITE_OK;
  int rc = p->real->pMethods->xSync(p->real, flags);
  if (rc == SQLITE_OK) {
    logRecord(REC_SYNC, p->id, flags, 0, 0);
    if (p->dirSyncPending) {
      p->dirSyncPending = 0;
      logRecord(REC_DIRSYNC, p->id, 0, 0, 0);
    }
  }
  return rc;
}
static int recFileSize(sqlite3_file *f, sqlite3_int64 *size) {
  RecFile *p = (RecFile *)f;
  return p->real->pMethods->xFileSize(p->real, size);
}
static int recLock(sqlite3_file *f, int l) {
  RecFile *p = (RecFile *)f;
  return p->real->pMethods->xLock(p->real, l);
}
static int recUnlock(sqlite3_file *f, int l) {
  RecFile *p = (RecFile *)f;
  return p->real->pMethods->xUnlock(p->real, l);
}
static int recCheckReservedLock(sqlite3_file *f, int *out) {
  RecFile *p = (RecFile *)f;
  return p->real->pMethods->xCheckReservedLock(p->real, out);
}
static int recFileControl(sqlite3_file *f, int op, void *arg) {
  RecFile *p = (RecFile *)f;
  /* No memory map: the real file would offer one through SQLITE_FCNTL_MMAP_SIZE. */
  if (op == SQLITE_FCNTL_MMAP_SIZE) {
    if (arg) *(sqlite3_int64 *)arg = 0;
    return SQLITE_OK;
  }
  return p->real->pMethods->xFileControl(p->real, op, arg);
}
static int recSectorSize(sqlite3_file *f) {
  RecFile *p = (RecFile *)f;
  return p->real->pMethods->xSectorSize(p->real);
}
static int recDeviceCharacteristics(sqlite3_file *f) {
  RecFile *p = (RecFile *)f;
  return p->real->pMethods->xDeviceCharacteristics(p->real);
}
static int recShmMap(sqlite3_file *f, int pg, int sz, int extend, void volatile **pp) {
  RecFile *p = (RecFile *)f;
  return p->real->pMethods->xShmMap(p->real, pg, sz, extend, pp);
}
static int recShmLock(sqlite3_file *f, int off, int n, int flags) {
  RecFile *p = (RecFile *)f;
  return p->real->pMethods->xShmLock(p->real, off, n, flags);
}
static void recShmBarrier(sqlite3_file *f) {
  RecFile *p = (RecFile *)f;
  p->real->pMethods->xShmBarrier(p->real);
}
static int recShmUnmap(sqlite3_file *f, int del) {
  RecFile *p = (RecFile *)f;
  return p->real->pMethods->xShmUnmap(p->real, del);
}

static const sqlite3_io_methods recMethods = {
    2, recClose, recRead, recWrite, recTruncate, recSync, recFileSize, recLock, recUnlock, recCheckReservedLock,
    recFileControl, recSectorSize, recDeviceCharacteristics, recShmMap, recShmLock, recShmBarrier, recShmUnmap, 0, 0,
};

static int recOpen(sqlite3_vfs *vfs, sqlite3_filename name, sqlite3_file *f, int flags, int *outFlags) {
  (void)vfs;
  RecFile *p = (RecFile *)f;
  p->real = (sqlite3_file *)&p[1];
  p->id = 0;
  p->dirSyncPending = 0;
  int existed = name ? access(name, F_OK) == 0 : 0;
  int rc = realVfs->xOpen(realVfs, name, p->real, flags, outFlags);
  if (rc != SQLITE_OK) {
    f->pMethods = 0;
    return rc;
  }
  f->pMethods = &recMethods;
  if (tracked(name) && (flags & (SQLITE_OPEN_MAIN_DB | SQLITE_OPEN_WAL | SQLITE_OPEN_MAIN_JOURNAL))) {
    p->id = nextId++;
    /* The unix VFS syncs the directory after the first sync of a journal or WAL it opened with CREATE. */
    p->dirSyncPending = (flags & SQLITE_OPEN_CREATE) && (flags & (SQLITE_OPEN_WAL | SQLITE_OPEN_MAIN_JOURNAL));
    int64_t a = (int64_t)flags | (existed ? ((int64_t)1 << 40) : 0);
    logRecord(REC_OPEN, p->id, a, name, (uint32_t)strlen(name));
  }
  return SQLITE_OK;
}
static int recDelete(sqlite3_vfs *vfs, const char *name, int dirSync) {
  (void)vfs;
  int rc = realVfs->xDelete(realVfs, name, dirSync);
  if (rc == SQLITE_OK && tracked(name)) {
    logRecord(REC_DELETE, 0, dirSync, name, (uint32_t)strlen(name));
    if (dirSync) logRecord(REC_DIRSYNC, 0, 0, 0, 0);
  }
  return rc;
}
static int recAccess(sqlite3_vfs *v, const char *n, int fl, int *out) { (void)v; return realVfs->xAccess(realVfs, n, fl, out); }
static int recFullPathname(sqlite3_vfs *v, const char *n, int sz, char *out) { (void)v; return realVfs->xFullPathname(realVfs, n, sz, out); }
static void *recDlOpen(sqlite3_vfs *v, const char *n) { (void)v; return realVfs->xDlOpen(realVfs, n); }
static void recDlError(sqlite3_vfs *v, int n, char *m) { (void)v; realVfs->xDlError(realVfs, n, m); }
static void (*recDlSym(sqlite3_vfs *v, void *h, const char *s))(void) { (void)v; return realVfs->xDlSym(realVfs, h, s); }
static void recDlClose(sqlite3_vfs *v, void *h) { (void)v; realVfs->xDlClose(realVfs, h); }
static int recRandomness(sqlite3_vfs *v, int n, char *out) { (void)v; return realVfs->xRandomness(realVfs, n, out); }
static int recSleep(sqlite3_vfs *v, int us) { (void)v; return realVfs->xSleep(realVfs, us); }
static int recCurrentTime(sqlite3_vfs *v, double *t) { (void)v; return realVfs->xCurrentTime(realVfs, t); }
static int recGetLastError(sqlite3_vfs *v, int n, char *m) { (void)v; return realVfs->xGetLastError ? realVfs->xGetLastError(realVfs, n, m) : 0; }
static int recCurrentTimeInt64(sqlite3_vfs *v, sqlite3_int64 *t) { (void)v; return realVfs->xCurrentTimeInt64(realVfs, t); }

/* powerloss_ctl(command, arg): log <path> | dir <prefix> | mark <text> | failsync <n> | failwrites <n> | dropsyncs <0|1> | stop. */
static void ctlFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  (void)argc;
  const char *cmd = (const char *)sqlite3_value_text(argv[0]);
  const char *arg = (const char *)sqlite3_value_text(argv[1]);
  if (!cmd) cmd = "";
  if (!arg) arg = "";
  if (strcmp(cmd, "log") == 0) {
    if (logFd >= 0) close(logFd);
    logFd = open(arg, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0600);
    syncsSeen = 0;
    failSyncAt = 0;
    writesSeen = 0;
    failWriteAt = 0;
    dropSyncs = 0;
    if (logFd < 0) { sqlite3_result_error(ctx, "powerloss_ctl: cannot open the log", -1); return; }
  } else if (strcmp(cmd, "dir") == 0) {
    strncpy(prefix, arg, sizeof prefix - 1);
  } else if (strcmp(cmd, "mark") == 0) {
    logRecord(REC_MARK, 0, 0, arg, (uint32_t)strlen(arg));
  } else if (strcmp(cmd, "failsync") == 0) {
    failSyncAt = syncsSeen + atol(arg);
  } else if (strcmp(cmd, "failwrites") == 0) {
    failWriteAt = atol(arg) ? writesSeen + atol(arg) : 0;
  } else if (strcmp(cmd, "dropsyncs") == 0) {
    dropSyncs = atoi(arg);
  } else if (strcmp(cmd, "stop") == 0) {
    if (logFd >= 0) close(logFd);
    logFd = -1;
    prefix[0] = 0;
  } else {
    sqlite3_result_error(ctx, "powerloss_ctl: unknown command", -1);
    return;
  }
  sqlite3_result_int64(ctx, syncsSeen);
}

#ifdef _WIN32
__declspec(dllexport)
#endif
int sqlite3_recordvfs_init(sqlite3 *db, char **err, const sqlite3_api_routines *api) {
  SQLITE_EXTENSION_INIT2(api);
  (void)err;
  int rc = SQLITE_OK;
  if (!realVfs) {
    realVfs = sqlite3_vfs_find(0);
    if (!realVfs) return SQLITE_ERROR;
    recVfs.iVersion = 2;
    recVfs.szOsFile = (int)sizeof(RecFile) + realVfs->szOsFile;
    recVfs.mxPathname = realVfs->mxPathname;
    recVfs.zName = "recordvfs";
    recVfs.xOpen = recOpen;
    recVfs.xDelete = recDelete;
    recVfs.xAccess = recAccess;
    recVfs.xFullPathname = recFullPathname;
    recVfs.xDlOpen = recDlOpen;
    recVfs.xDlError = recDlError;
    recVfs.xDlSym = recDlSym;
    recVfs.xDlClose = recDlClose;
    recVfs.xRandomness = recRandomness;
    recVfs.xSleep = recSleep;
    recVfs.xCurrentTime = recCurrentTime;
    recVfs.xGetLastError = recGetLastError;
    recVfs.xCurrentTimeInt64 = recCurrentTimeInt64;
    rc = sqlite3_vfs_register(&recVfs, 1);
    if (rc != SQLITE_OK) return rc;
  }
  rc = sqlite3_create_function(db, "powerloss_ctl", 2, SQLITE_UTF8, 0, ctlFunc, 0, 0);
  return rc == SQLITE_OK ? SQLITE_OK_LOAD_PERMANENTLY : rc;
}
