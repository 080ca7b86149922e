// `fencer proxy`: the per-node network of the process simulator (see src/simulator/proxy.ts).
// Started by the simulator, not by people, so it stays out of the help.
import type { Command } from 'commander';
import { parseRoutes, TcpProxy } from '../simulator/proxy.js';

export function registerProxyCommand(program: Command): void {
  program
    .command('proxy', { hidden: true })
    .description('forward TCP on 127.0.0.1 from each PORT to its TARGETPORT')
    .requiredOption('--listen <routes>', 'PORT:TARGETPORT[,PORT:TARGETPORT...]')
    .action(async (opts: { listen: string }) => {
      const proxy = new TcpProxy(parseRoutes(opts.listen));
      await proxy.start();
      const shutdown = () => void proxy.stop().then(() => process.exit(0));
      process.on('SIGTERM', shutdown);
      process.on('SIGINT', shutdown);
    });
}
