// The fault suite's hangable TCP proxy (a stuck proxy or NAT in front of a kube-apiserver):
// it carries bytes both ways until black-holed, then carries none on any connection and
// closes none; after the heal only new connections carry.
import { connect, createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { HangingTcpProxy } from '../src/chaos/tcp-proxy.js';

let echo: Server;
let proxy: HangingTcpProxy;
const clients: Socket[] = [];
/** The echo server's side of each connection (to close them as a server would). */
const served: Socket[] = [];
const closeServed = () => served.splice(0).forEach((s) => s.destroy());

beforeEach(async () => {
  echo = createServer((s) => {
    served.push(s);
    s.on('data', (d) => s.write(`echo ${d.toString()}`));
  });
  await new Promise<void>((r) => echo.listen(0, '127.0.0.1', r));
  proxy = new HangingTcpProxy('127.0.0.1', (echo.address() as AddressInfo).port);
  await proxy.start();
});

afterEach(async () => {
  for (const c of clients.splice(0)) c.destroy();
  await proxy.stop();
  closeServed();
  await new Promise<void>((r) => echo.close(() => r()));
});

/** A client connection through the proxy that keeps what it received and whether it closed. */
async function client(): Promise<{ socket: Socket; got: () => string; closed: () => boolean }> {
  const socket = connect(proxy.listenPort, '127.0.0.1');
  clients.push(socket);
  let got = '';
  let closed = false;
  socket.on('data', (d) => (got += d.toString()));
  socket.on('close', () => (closed = true));
  await new Promise<void>((r) => socket.once('connect', () => r()));
  return { socket, got: () => got, closed: () => closed };
}

const settle = () => sleep(100);

it('carries bytes both ways until black-holed', async () => {
  const c = await client();
  c.socket.write('a');
  await settle();
  expect(c.got()).toBe('echo a');
});

it('black-holed: an open and a new connection get nothing and stay open, even if the server closes', async () => {
  const open = await client();
  proxy.blackHole(true);
  open.socket.write('b');
  const fresh = await client();
  fresh.socket.write('c');
  closeServed();
  await settle();
  expect([open.got(), fresh.got(), open.closed(), fresh.closed()]).toEqual(['', '', false, false]);
  expect(proxy.swallowedBytes).toBe(2);
});

it('healed: new connections carry again, those the black hole took stay dead', async () => {
  const held = await client();
  proxy.blackHole(true);
  held.socket.write('d');
  await settle();
  proxy.blackHole(false);
  held.socket.write('e');
  const fresh = await client();
  fresh.socket.write('f');
  await settle();
  expect([held.got(), held.closed(), fresh.got()]).toEqual(['', false, 'echo f']);
  expect(proxy.connections).toBe(2);
});

it('slowed: carries every byte late and in order, and the server closing after them', async () => {
  const c = await client();
  proxy.delay(150);
  const sent = Date.now();
  c.socket.write('g');
  await sleep(60);
  c.socket.write('h');
  await settle();
  expect(c.got()).toBe('');
  await sleep(400);
  // Each chunk 150 ms to the server and 150 ms back; the echo answers each on its own.
  expect(c.got()).toBe('echo gecho h');
  expect(Date.now() - sent).toBeGreaterThanOrEqual(300);
  closeServed();
  await settle();
  expect(c.closed()).toBe(false);
  await sleep(150);
  expect(c.closed()).toBe(true);
});
