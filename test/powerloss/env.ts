// Imported first by the harness: short leases, so a cut's run (left leased by the recording) can be resumed seconds later.

// After a real power cut the machine reboots and the recorded holder is only trusted until its lease expires; the
// harness waits out this TTL once after recording, as a rebooted machine would.
process.env.LOGBOOK_LEASE_TTL_MS ??= '4000';
export const LEASE_TTL_MS = Number(process.env.LOGBOOK_LEASE_TTL_MS);
