// `flywheel codec-server`: decodes encrypted workflow payloads for the Temporal UI (Settings → Codec Server →
// this URL) and `temporal workflow show --codec-endpoint`, in the foreground until Ctrl-C.
import type { Command } from 'commander';
import { resolveConfig } from '../../core/config';
import { AesGcmPayloadCodec, parsePayloadKeys } from '../../temporal/payload-codec';
import { UsageError } from '../errors';
import { checkBindHost } from '../../server/http/bearer-token';
import { integerOption } from '../integer-option';
import { startCodecServer } from '../../server/codec-server';

export function registerCodecServer(program: Command): void {
  program
    .command('codec-server')
    .description('serve POST /encode and POST /decode for the Temporal UI, with the keys of FLYWHEEL_PAYLOAD_KEY')
    .option('--port <port>', 'TCP port (0: any free port)', '8888')
    .option('--host <host>', 'address to bind; anything but loopback needs FLYWHEEL_API_TOKEN', '127.0.0.1')
    .option('--ui-origin <origin...>', 'browser origins allowed by CORS (default: the dev stack UI on 127.0.0.1 and localhost)')
    .addHelpText(
      'after',
      '\nWith FLYWHEEL_API_TOKEN set, requests need "Authorization: Bearer $FLYWHEEL_API_TOKEN".\n\nExample:\n  $ FLYWHEEL_PAYLOAD_KEY=k1:$KEY_BASE64 flywheel codec-server --port 8888\n  then set the Temporal UI\'s codec endpoint to http://127.0.0.1:8888\n',
    )
    .action(async (opts: { port: string; host: string; uiOrigin?: string[] }) => {
      const port = integerOption('--port', 0, 65535)(opts.port);
      const config = resolveConfig(process.env, process.cwd());
      if (!config.payloadKeys)
        throw new UsageError('FLYWHEEL_PAYLOAD_KEY is not set: there is nothing to decode (format: id:base64key[,id:base64key…])');
      const token = process.env.FLYWHEEL_API_TOKEN || undefined;
      checkBindHost(opts.host, token, 'decode workflow payloads');
      const ui = config.temporalUiPort;
      const server = await startCodecServer({
        codec: new AesGcmPayloadCodec(parsePayloadKeys(config.payloadKeys)),
        port,
        host: opts.host,
        token,
        origins: opts.uiOrigin ?? [`http://127.0.0.1:${ui}`, `http://localhost:${ui}`],
      });
      if (!token) console.error(`warning: FLYWHEEL_API_TOKEN is not set: anyone who can reach ${server.url} can decode payloads`);
      console.log(`codec server on ${server.url} (Ctrl-C to stop)`);
      await new Promise<void>((resolve) => {
        process.once('SIGINT', resolve);
        process.once('SIGTERM', resolve);
      });
      await server.close();
    });
}
