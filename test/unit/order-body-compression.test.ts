import { randomBytes } from 'node:crypto';
import { orderBody } from '../../bench/common.js';
import { compressBody, decompressBody } from '../../shared/order-flow/order-repository.js';

/**
 * The order's body as kept (shared/order-flow/order-repository.ts): compressed with a window fitted to its size, and
 * read back byte for byte, on each side of every window boundary (2^n − 16 bytes) and up to 1 MiB.
 */
describe('compressBody', () => {
  /** JSON-ish text of `bytes` bytes that does not compress to nothing: hex of random bytes in a template. */
  const body = (bytes: number) =>
    Buffer.from(`{"note":"${randomBytes(bytes).toString('hex')}"}`.padEnd(bytes, ' ').slice(0, bytes), 'utf8');

  it.each([0, 1, 479, 1008, 1009, 2032, 2033, 65_520, 65_521, 350_001, 1_048_576])(
    'keeps a %i-byte body exactly',
    (bytes) => {
      const raw = body(bytes);
      expect(raw.length).toBe(bytes);
      expect(decompressBody(compressBody(raw))).toBe(raw.toString('utf8'));
    },
  );

  it('compresses an order of the benchmark to under 260 of its 479 bytes and keeps it', () => {
    const order = Buffer.from(orderBody(1795908033691125, 'BenchSupplier'));
    const compressed = compressBody(order);
    expect(compressed.length).toBeLessThanOrEqual(260);
    expect(decompressBody(compressed)).toBe(order.toString('utf8'));
  });
});
