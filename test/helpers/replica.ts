// A real replica in this process, on a free port, for API tests.
import pino from 'pino';
import { Replica, type ReplicaOptions } from '../../src/replica.js';
import { DEFAULT_TIMINGS, type Timings } from '../../src/config.js';
import { freePort } from '../../src/net/free-port.js';
import { TEST_ISSUERS, TEST_TLS } from './auth.js';

export async function startReplica(
  databaseUrl: string,
  name = 'replica-t',
  timings: Partial<Timings> = {},
  more: Partial<ReplicaOptions> = {},
): Promise<Replica> {
  const replica = new Replica({
    name,
    host: '127.0.0.1',
    port: await freePort(),
    databaseUrl,
    timings: { ...DEFAULT_TIMINGS, ...timings },
    logger: pino({ level: 'silent' }),
    auth: { issuers: TEST_ISSUERS },
    tls: TEST_TLS,
    ...more,
  });
  await replica.start();
  return replica;
}
