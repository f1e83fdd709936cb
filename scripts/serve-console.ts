/** Console process entry: `node scripts/serve-console.ts [--dev]` (the launcher and Kubernetes both run it). */
import { SecretsError } from '@switchyard/db/security/secrets.ts';
import { ConfigError, loadConsoleConfig } from '../server/config.ts';
import { startConsole } from '../server/console.ts';

try {
  const config = loadConsoleConfig();
  const running = await startConsole(config, { dev: process.argv.includes('--dev') });
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`[console] ${signal}: shutting down`);
    const timer = setTimeout(() => process.exit(1), 15_000);
    timer.unref();
    await running.stop();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
} catch (err) {
  console.error(err instanceof ConfigError || err instanceof SecretsError ? `[console] ${err.message}` : err);
  process.exit(1);
}
