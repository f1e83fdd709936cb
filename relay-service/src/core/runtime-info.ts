import { readFileSync } from 'node:fs';
import process from 'node:process';
import { type RuntimeName, runtime } from '../runtime.ts';
import type { StoreMode } from '../store/types.ts';

/** What the console's "system info" card and health page show about a relay instance. */
export type RuntimeInfo = {
  /** Relay release, e.g. "v0.1.0" (SWITCHYARD_VERSION overrides the package version). */
  version: string;
  /** Unix seconds. */
  startedAt: number;
  runtime: RuntimeName;
  runtimeVersion: string;
  storeMode: StoreMode;
  instanceId: string;
};

function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    version: string;
  };
  return `v${pkg.version}`;
}

export function createRuntimeInfo(opts: {
  storeMode: StoreMode;
  instanceId?: string | undefined;
}): RuntimeInfo {
  return {
    version: process.env.SWITCHYARD_VERSION ?? packageVersion(),
    startedAt: Math.floor(Date.now() / 1000),
    runtime: runtime.name,
    runtimeVersion: runtime.version,
    storeMode: opts.storeMode,
    instanceId: opts.instanceId ?? crypto.randomUUID(),
  };
}
