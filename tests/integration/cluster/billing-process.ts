/**
 * The console's Billing gRPC service alone in a process, so a test can SIGKILL it mid-transaction and start it
 * again on the same port. Env: DATABASE_URL, BILLING_PORT, INTERNAL_API_SECRET. Prints `BILLING_READY <host:port>` once serving.
 */
import process from 'node:process';
import { OptionService } from '@switchyard/db/options/service.ts';
import { initOrm } from '@switchyard/db/orm.ts';
import { createMemoryPubSub } from '@switchyard/db/pubsub.ts';
import { createLogger } from '@switchyard/relay/log.ts';
import { startConsoleGrpc } from '#app/grpc/server.server.ts';

const url = process.env.DATABASE_URL;
if (!url) throw new Error('DATABASE_URL is required');
const orm = await initOrm(url, { poolMax: 10 });
// Options are read once: the cluster test does not change billing-relevant options while Billing runs.
const options = new OptionService({ orm, pubsub: createMemoryPubSub() });
await options.load();
const server = await startConsoleGrpc({
  host: '127.0.0.1',
  port: Number(process.env.BILLING_PORT ?? 0),
  billing: { em: () => orm.em.fork(), options },
  security: { secret: process.env.INTERNAL_API_SECRET ?? '', tls: null },
  log: createLogger('warn', '[billing]'),
});
console.log(`BILLING_READY ${server.address}`);

const shutdown = () => {
  void server
    .stop(0)
    .then(() => orm.close(true))
    .finally(() => process.exit(0));
};
process.on('SIGTERM', shutdown);
process.on('SIGINT', shutdown);
