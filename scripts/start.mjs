// npm start: set up what is missing, build what is stale, serve www/ with the isolation headers.
//   npm start -- --port 9000     another port (or PORT=9000 npm start)
//   npm start -- --no-isolation  serve without COOP/COEP (the single-threaded engine runs)
import { setup } from './setup.mjs';
import { build } from './build.mjs';
import { serve } from './serve.mjs';
import { main } from './util.mjs';

const args = process.argv.slice(2);
const portArg = args.indexOf('--port');
const port = Number(portArg >= 0 ? args[portArg + 1] : process.env.PORT || 8080);
const isolate = !args.includes('--no-isolation');

main(async () => {
  await setup();
  await build();
  const { url } = await serve({ port, host: 'localhost', isolate });
  console.log(`\nmemlens is served at ${url}${isolate ? '' : ' (without cross-origin isolation)'}`);
  console.log('Offline single file: dist/memlens.html. Press Ctrl+C to stop.');
});
