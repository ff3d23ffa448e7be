import { z } from 'zod';
import { csrf, field } from './form.ts';

export const loginForm = z.object({
  login: field(200),
  password: z.string().max(1000),
  next: z.string().max(2000).optional(),
  ...csrf,
});

export const setupForm = z.object({
  token: z.string().max(200),
  name: field(100).min(1, 'your name is needed'),
  login: field(64),
  password: z.string().max(1000),
  repeat: z.string().max(1000),
  ...csrf,
});

export const setupQuery = z.object({ token: z.string().max(200).default('') });
