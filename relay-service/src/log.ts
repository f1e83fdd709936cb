/** A small leveled logger: one line per event, prefixed with the process name (LOG_LEVEL filters). */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

export type Logger = {
  debug(msg: string): void;
  info(msg: string): void;
  warn(msg: string): void;
  error(msg: string, err?: unknown): void;
};

const order: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export function createLogger(level: LogLevel, prefix = '[relay]'): Logger {
  const on = (l: LogLevel) => order[l] >= order[level];
  return {
    debug: (msg) => on('debug') && console.debug(`${prefix} ${msg}`),
    info: (msg) => on('info') && console.log(`${prefix} ${msg}`),
    warn: (msg) => on('warn') && console.warn(`${prefix} ${msg}`),
    error: (msg, err) => {
      if (!on('error')) return;
      if (err === undefined) console.error(`${prefix} ${msg}`);
      else console.error(`${prefix} ${msg}`, err);
    },
  };
}

/** Discards everything (tests). */
export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };
