import { createServer } from 'node:http';
import { createApp } from './app.js';

const host = process.env.HOST ?? '127.0.0.1';
const port = Number(process.env.PORT ?? 3000);

const server = createServer(createApp());
server.listen(port, host, () => {
  console.log(`listening on port ${port}`);
});

function stop(): void {
  server.close(() => process.exit(0));
  server.closeAllConnections();
}
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
