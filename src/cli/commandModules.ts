// The commands that live in their own modules (plan, rehearse, delete, fork, worker): main.ts dispatches to them by name.
import { rehearseCommand } from '../rehearse/rehearseCommand';
import type { CommandModule } from './journalOption';
import { planCommand } from './plan';
import { deleteCommand } from './delete';
import { workerCommand } from './workerCommand';
import { forkCommand } from './forkCommand';
import { tracesCommand } from './tracesCommand';
import { cancelCommand } from './cancelCommand';

export const COMMAND_MODULES: readonly CommandModule[] = [
  planCommand,
  rehearseCommand,
  deleteCommand,
  forkCommand,
  workerCommand,
  tracesCommand,
  cancelCommand,
];
