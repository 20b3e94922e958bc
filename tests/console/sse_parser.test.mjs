// The console's event-stream parser (adapters/console/web/src/api.js, sseParser), which the
// chat and event pages feed with whatever the network delivers: events split at any byte, every
// line ending, comments, and hostile input (an endless line or event) that must fail instead of
// growing without bound.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sseParser } from '../../adapters/console/web/src/api.js';

function parse(chunks, limit) {
  const events = [];
  const feed = sseParser((event) => events.push(event), limit);
  for (const chunk of chunks) {
    feed(chunk);
  }
  return events;
}

const kStream =
  ': heartbeat\n' +
  'event: session\nid: 7\ndata: {"type":"session"}\n\n' +
  'data: line one\ndata: line two\n\n' +
  'data:no space\r\n\r\n' +
  'event: done\rdata: {}\r\r';

// The last event id stays until another id field replaces it (the SSE "last event ID").
const kExpected = [
  { event: 'session', data: '{"type":"session"}', id: '7' },
  { event: 'message', data: 'line one\nline two', id: '7' },
  { event: 'message', data: 'no space', id: '7' },
  { event: 'done', data: '{}', id: '7' },
];

test('events are the same however the stream is split', () => {
  assert.deepEqual(parse([kStream]), kExpected);
  // Every split point, including between the CR and LF of one line ending.
  for (let cut = 1; cut < kStream.length; cut += 1) {
    assert.deepEqual(parse([kStream.slice(0, cut), kStream.slice(cut)]), kExpected, `cut at ${cut}`);
  }
  assert.deepEqual(parse([...kStream]), kExpected);
});

test('comments, fields without data and unknown fields dispatch nothing', () => {
  assert.deepEqual(parse([': ping\n\nevent: x\n\nid: 3\n\nretry: 10\nfoo: bar\n\n']), []);
  // An unfinished event at the end of the stream is not dispatched.
  assert.deepEqual(parse(['data: half']), []);
});

test('an id holding NUL is ignored, as the SSE specification says', () => {
  assert.deepEqual(parse(['id: a\0b\ndata: x\n\n']), [{ event: 'message', data: 'x', id: '' }]);
});

test('an oversized event or endless line is refused, not buffered', () => {
  const limit = 1024;
  assert.throws(
    () => parse([`data: ${'a'.repeat(600)}\n`, `data: ${'b'.repeat(600)}\n\n`], limit),
    /over the size limit/,
  );
  assert.throws(() => parse(['data: ', 'x'.repeat(2048)], limit), /over the size limit/);
  // Up to the limit is fine.
  assert.equal(parse([`data: ${'a'.repeat(1000)}\n\n`], limit)[0].data.length, 1000);
});
