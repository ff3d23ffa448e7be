import { z } from 'zod';
import { parseReportDate } from '../../reports/day-report.ts';

const date = z
  .string()
  .refine((text) => parseReportDate(text) !== undefined, 'a date like 2026-03-29')
  .optional();

export const dayQuery = z.object({ date });

export const chartQuery = z.object({
  days: z.enum(['30', '365']).default('30'),
  date,
});
