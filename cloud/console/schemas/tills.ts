import { z } from 'zod';
import { csrf } from './form.ts';

export const tillNameForm = z.object({ name: z.string().max(200), ...csrf });
