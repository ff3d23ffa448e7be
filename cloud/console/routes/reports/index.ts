import type { FastifyPluginAsync } from 'fastify';
import { dayReport } from '../../../reports/day-report.ts';
import { dayReportCsv, dayReportFileName } from '../../../reports/report-csv.ts';
import { addDays, takingsByDay } from '../../../reports/takings-chart.ts';
import { shopToday } from '../../../shops/shops.ts';
import { pageContext, sendPage } from '../../page-context.ts';
import { parseForm } from '../../schemas/form.ts';
import { chartQuery, dayQuery } from '../../schemas/reports.ts';
import { chartView } from '../../views/chart.ts';
import { dayReportView } from '../../views/day-report.ts';
import { longDate } from '../../views/format.ts';
import { page } from '../../views/layout.ts';

type ShopParams = { Params: { shopId: string } };

/** The day report (page and CSV) and the daily takings chart. */
const reportRoutes: FastifyPluginAsync = async (fastify) => {
  const { db } = fastify.book;

  fastify.get<ShopParams>('/shops/:shopId/day', async (request, reply) => {
    const shop = await request.shopFor('report');
    const query = parseForm(dayQuery, request.query);
    const today = await shopToday(db, shop);
    const date = query.date ?? today;
    const report = await dayReport(db, shop, date);
    const base = `/console/shops/${shop.id}`;
    const ctx = await pageContext(request, reply, shop);
    return sendPage(
      reply,
      page(
        ctx,
        date === today ? 'Today' : longDate(date),
        dayReportView(report, {
          shopId: shop.id,
          previous: `${base}/day?date=${addDays(date, -1)}`,
          next: date < today ? `${base}/day?date=${addDays(date, 1)}` : null,
          csv: `${base}/day.csv?date=${date}`,
          chart: ctx.operator.role === 'staff' ? null : `${base}/chart?date=${date}`,
        }),
      ),
    );
  });

  fastify.get<ShopParams>('/shops/:shopId/day.csv', async (request, reply) => {
    const shop = await request.shopFor('report');
    const query = parseForm(dayQuery, request.query);
    const report = await dayReport(db, shop, query.date ?? (await shopToday(db, shop)));
    return reply
      .header('Cache-Control', 'no-store')
      .header('Content-Disposition', `attachment; filename="${dayReportFileName(report)}"`)
      .type('text/csv; charset=utf-8')
      .send(dayReportCsv(report));
  });

  fastify.get<ShopParams>('/shops/:shopId/chart', async (request, reply) => {
    const shop = await request.shopFor('manage');
    const query = parseForm(chartQuery, request.query);
    const days = Number(query.days);
    const today = await shopToday(db, shop);
    const last = query.date ?? today;
    const series = await takingsByDay(db, shop, last, days);
    const base = `/console/shops/${shop.id}`;
    const otherDays = days === 30 ? 365 : 30;
    return sendPage(
      reply,
      page(
        await pageContext(request, reply, shop),
        `Takings, ${days} days`,
        chartView(
          series,
          {
            days,
            otherDays,
            other: `${base}/chart?days=${otherDays}&date=${last}`,
            day: (date) => `${base}/day?date=${date}`,
          },
          today,
        ),
        {
          scripts: ['/console/assets/uplot.js', '/console/assets/takings-chart.js'],
          styles: ['/console/assets/uplot.css'],
        },
      ),
    );
  });
};

export default reportRoutes;
