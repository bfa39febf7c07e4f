import { DecryptCommand, EncryptCommand, InvalidCiphertextException, KMSClient } from '@aws-sdk/client-kms';
import { kmsCipher } from '../../shared/aws/kms-cipher.js';
import { kms } from './aws-mocks.js';

/** The KMS cipher for store secrets (shared/aws/kms-cipher.ts): encryption context and decrypt cache. */

const KEY = 'arn:aws:kms:us-east-1:000000000000:key/secrets-test';
const client = () =>
  new KMSClient({ region: 'us-east-1', credentials: { accessKeyId: 'test', secretAccessKey: 'test' } });

const ctx = (storeId: string, field: 'accessToken' | 'webhookSecret' = 'accessToken') => ({ storeId, field });
const blob = (text: string) => Buffer.from(text).toString('base64');
/** KMS decrypts each ciphertext to `plain-<its text>`. */
const decryptsToPlainText = () =>
  kms
    .on(DecryptCommand)
    .callsFake((input) => ({ Plaintext: Buffer.from(`plain-${Buffer.from(input.CiphertextBlob).toString()}`) }));

beforeEach(() => {
  kms.reset();
  jest.restoreAllMocks();
});

describe('kmsCipher.encrypt', () => {
  it('seals the plaintext under the key with the store id and field as encryption context', async () => {
    kms.on(EncryptCommand).resolves({ CiphertextBlob: Uint8Array.from([1, 2, 3, 250]) });
    const cipher = kmsCipher(client(), () => KEY);

    const out = await cipher.encrypt('shpat_secret', ctx('sst_1', 'webhookSecret'));

    expect(out).toBe(Buffer.from([1, 2, 3, 250]).toString('base64'));
    const calls = kms.commandCalls(EncryptCommand);
    expect(calls).toHaveLength(1);
    const input = calls[0].args[0].input;
    expect(input.KeyId).toBe(KEY);
    expect(input.EncryptionContext).toEqual({ storeId: 'sst_1', field: 'webhookSecret' });
    expect(Buffer.from(input.Plaintext!).toString('utf8')).toBe('shpat_secret');
  });

  it('reads the key id when it encrypts, not when it is built', async () => {
    kms.on(EncryptCommand).resolves({ CiphertextBlob: Uint8Array.from([9]) });
    let keyId = 'first';
    const cipher = kmsCipher(client(), () => keyId);
    keyId = 'second';
    await cipher.encrypt('x', ctx('rst_1'));
    expect(kms.commandCalls(EncryptCommand)[0].args[0].input.KeyId).toBe('second');
  });

  it('never caches an encryption', async () => {
    kms.on(EncryptCommand).resolves({ CiphertextBlob: Uint8Array.from([9]) });
    const cipher = kmsCipher(client(), () => KEY);
    await cipher.encrypt('same', ctx('rst_1'));
    await cipher.encrypt('same', ctx('rst_1'));
    expect(kms.commandCalls(EncryptCommand)).toHaveLength(2);
  });
});

describe('kmsCipher.decrypt', () => {
  it('passes the ciphertext bytes and the encryption context, and answers the plaintext', async () => {
    kms.on(DecryptCommand).resolves({ Plaintext: Buffer.from('whsec_plain', 'utf8') });
    const cipher = kmsCipher(client(), () => KEY);

    await expect(cipher.decrypt(blob('ciphertext-1'), ctx('sst_1', 'webhookSecret'))).resolves.toBe('whsec_plain');

    const input = kms.commandCalls(DecryptCommand)[0].args[0].input;
    expect(Buffer.from(input.CiphertextBlob!).toString('utf8')).toBe('ciphertext-1');
    expect(input.EncryptionContext).toEqual({ storeId: 'sst_1', field: 'webhookSecret' });
  });

  it('answers a repeated decrypt from its cache, without a second KMS call', async () => {
    kms.on(DecryptCommand).resolves({ Plaintext: Buffer.from('whsec_plain') });
    const cipher = kmsCipher(client(), () => KEY);

    await expect(cipher.decrypt(blob('c'), ctx('sst_1'))).resolves.toBe('whsec_plain');
    await expect(cipher.decrypt(blob('c'), ctx('sst_1'))).resolves.toBe('whsec_plain');
    await expect(cipher.decrypt(blob('c'), ctx('sst_1'))).resolves.toBe('whsec_plain');

    expect(kms.commandCalls(DecryptCommand)).toHaveLength(1);
  });

  it('keys the cache by context: the same ciphertext under another store or field asks KMS again', async () => {
    kms
      .on(DecryptCommand, { EncryptionContext: { storeId: 'sst_1', field: 'accessToken' } })
      .resolves({ Plaintext: Buffer.from('token-1') })
      .on(DecryptCommand, { EncryptionContext: { storeId: 'sst_2', field: 'accessToken' } })
      .rejects(new InvalidCiphertextException({ message: 'context mismatch', $metadata: {} }))
      .on(DecryptCommand, { EncryptionContext: { storeId: 'sst_1', field: 'webhookSecret' } })
      .rejects(new InvalidCiphertextException({ message: 'context mismatch', $metadata: {} }));
    const cipher = kmsCipher(client(), () => KEY);

    await expect(cipher.decrypt(blob('c'), ctx('sst_1'))).resolves.toBe('token-1');
    await expect(cipher.decrypt(blob('c'), ctx('sst_2'))).rejects.toThrow(InvalidCiphertextException);
    await expect(cipher.decrypt(blob('c'), ctx('sst_1', 'webhookSecret'))).rejects.toThrow(InvalidCiphertextException);
    expect(kms.commandCalls(DecryptCommand)).toHaveLength(3);
  });

  it('shares one KMS call between concurrent decrypts of the same secret', async () => {
    kms.on(DecryptCommand).resolves({ Plaintext: Buffer.from('shpat_plain') });
    const cipher = kmsCipher(client(), () => KEY);

    const values = await Promise.all(Array.from({ length: 10 }, () => cipher.decrypt(blob('sealed'), ctx('sst_1'))));

    expect(values).toEqual(Array(10).fill('shpat_plain'));
    expect(kms.commandCalls(DecryptCommand)).toHaveLength(1);
  });

  it.each([
    ['does not cache a failure', new Error('throttled'), 'throttled', 'later'],
    [
      'does not keep a refusal (a disabled key): the next decrypt of that ciphertext asks KMS again',
      new InvalidCiphertextException({ message: 'disabled', $metadata: {} }),
      'disabled',
      'v',
    ],
  ])('%s', async (_, refusal, message, plain) => {
    kms
      .on(DecryptCommand)
      .rejectsOnce(refusal)
      .resolves({ Plaintext: Buffer.from(plain) });
    const cipher = kmsCipher(client(), () => KEY);

    await expect(cipher.decrypt(blob('c'), ctx('sst_1'))).rejects.toThrow(message);
    await expect(cipher.decrypt(blob('c'), ctx('sst_1'))).resolves.toBe(plain);
    expect(kms.commandCalls(DecryptCommand)).toHaveLength(2);
  });

  it("keeps a decrypted secret for the environment's life: no second call a day later", async () => {
    kms.on(DecryptCommand).resolves({ Plaintext: Buffer.from('v') });
    const cipher = kmsCipher(client(), () => KEY);
    let now = 1_800_000_000_000;
    jest.spyOn(Date, 'now').mockImplementation(() => now);

    await cipher.decrypt(blob('c'), ctx('sst_1'));
    now += 24 * 3_600_000;
    await expect(cipher.decrypt(blob('c'), ctx('sst_1'))).resolves.toBe('v');
    expect(kms.commandCalls(DecryptCommand)).toHaveLength(1);
  });

  it('honours a rotation at once: the new ciphertext is decrypted, never answered from the old one', async () => {
    decryptsToPlainText();
    const cipher = kmsCipher(client(), () => KEY);

    await expect(cipher.decrypt(blob('before-rotation'), ctx('sst_1'))).resolves.toBe('plain-before-rotation');
    await expect(cipher.decrypt(blob('after-rotation'), ctx('sst_1'))).resolves.toBe('plain-after-rotation');
    expect(kms.commandCalls(DecryptCommand)).toHaveLength(2);
  });

  it('drops the least recently used value when full, not the oldest one still in use', async () => {
    decryptsToPlainText();
    const cipher = kmsCipher(client(), () => KEY, { ttlMs: Number.POSITIVE_INFINITY, max: 2 });
    await cipher.decrypt(blob('a'), ctx('sst_1'));
    await cipher.decrypt(blob('b'), ctx('sst_1'));
    await cipher.decrypt(blob('a'), ctx('sst_1'));
    await cipher.decrypt(blob('c'), ctx('sst_1'));
    expect(kms.commandCalls(DecryptCommand)).toHaveLength(3);

    await expect(cipher.decrypt(blob('a'), ctx('sst_1'))).resolves.toBe('plain-a');
    expect(kms.commandCalls(DecryptCommand)).toHaveLength(3);
    await expect(cipher.decrypt(blob('b'), ctx('sst_1'))).resolves.toBe('plain-b');
    expect(kms.commandCalls(DecryptCommand)).toHaveLength(4);
  });

  it('asks KMS again once the cached value is as old as a time to live given (five minutes here)', async () => {
    kms.on(DecryptCommand).resolves({ Plaintext: Buffer.from('v') });
    const cipher = kmsCipher(client(), () => KEY, { ttlMs: 5 * 60_000, max: 1_000 });
    let now = 1_800_000_000_000;
    jest.spyOn(Date, 'now').mockImplementation(() => now);

    await cipher.decrypt(blob('c'), ctx('sst_1'));
    now += 5 * 60_000 - 1;
    await cipher.decrypt(blob('c'), ctx('sst_1'));
    expect(kms.commandCalls(DecryptCommand)).toHaveLength(1);

    now += 1;
    await cipher.decrypt(blob('c'), ctx('sst_1'));
    expect(kms.commandCalls(DecryptCommand)).toHaveLength(2);
  });

  it('holds at most 1,000 values, dropping the oldest first', async () => {
    decryptsToPlainText();
    const cipher = kmsCipher(client(), () => KEY);

    for (let i = 0; i < 1_001; i++) await cipher.decrypt(blob(`c${i}`), ctx('sst_1'));
    expect(kms.commandCalls(DecryptCommand)).toHaveLength(1_001);

    await expect(cipher.decrypt(blob('c1000'), ctx('sst_1'))).resolves.toBe('plain-c1000');
    await expect(cipher.decrypt(blob('c1'), ctx('sst_1'))).resolves.toBe('plain-c1');
    expect(kms.commandCalls(DecryptCommand)).toHaveLength(1_001);

    await expect(cipher.decrypt(blob('c0'), ctx('sst_1'))).resolves.toBe('plain-c0');
    expect(kms.commandCalls(DecryptCommand)).toHaveLength(1_002);
  });

  it('keeps one cache per cipher', async () => {
    kms.on(DecryptCommand).resolves({ Plaintext: Buffer.from('v') });
    await kmsCipher(client(), () => KEY).decrypt(blob('c'), ctx('sst_1'));
    await kmsCipher(client(), () => KEY).decrypt(blob('c'), ctx('sst_1'));
    expect(kms.commandCalls(DecryptCommand)).toHaveLength(2);
  });
});
