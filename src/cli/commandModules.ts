// The commands that live in their own modules (plan, rehearse, delete, fork, worker): main.ts dispatches to them by name.
import { rehearseCommand } from '../rehearse/command';
import type { CommandModule } from './command';
import { planCommand } from './plan';
import { deleteCommand } from './delete';
import { workerCommand } from './worker';
import { forkCommand } from './fork';

export const COMMAND_MODULES: readonly CommandModule[] = [planCommand, rehearseCommand, deleteCommand, forkCommand, workerCommand];
