// Further commands (plan, rehearse, …) register here so the dispatcher stays one small switch.

import type { Io } from './main';
import { rehearseCommand } from '../rehearse/command';
import { planCommand } from './plan';
import { deleteCommand } from './delete';

export interface ExtraCommand {
  readonly name: string;
  readonly usage: string;
  run(args: string[], io: Io): Promise<number>;
}

export const EXTRA_COMMANDS: ExtraCommand[] = [planCommand, rehearseCommand, deleteCommand];
