// English texts for the issues our zod/mini schemas raise, handed to each parse whose issues someone reads.

import type * as z from 'zod/mini';
import { en } from 'zod/locales';

/**
 * zod/mini loads no locale, so without a map every issue reads "Invalid input". Full zod installs English in zod's
 * process-wide config, which every zod copy shares through globalThis; our code runs beside other zod users (the
 * runner loads the agent script, the extension host is shared), so we pass the map per parse instead of changing
 * their config. A schema's own message (e.g. a regex's) still wins over it.
 */
export const ENGLISH: z.core.ParseContext<z.core.$ZodIssue> = { error: en().localeError };
