import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { decide, type Request, type Statement } from '../policy.js';
import { accessDenied, encryptionContextKeys } from './authorize.js';

/**
 * A local stand-in for KMS that speaks the same JSON protocol (`TrentService.Encrypt`/`Decrypt`),
 * so the service's real KMS adapter runs unchanged against it. AES-256-GCM with the encryption
 * context as additional data: like KMS, a ciphertext only decrypts under the context it was
 * sealed with. Given the key's policy, it applies it as KMS does: a caller whose credentials name a
 * function (its SigV4 access key id) may use the key only as a statement allows, with the request's
 * encryption context as the condition keys, and is refused with `AccessDeniedException` otherwise.
 * The role's own policy is checked before the call leaves the function (authorize.ts).
 */

export interface KmsEmulator {
  url: string;
  keyId: string;
  calls: { Encrypt: number; Decrypt: number };
  stop(): Promise<void>;
}

const VERSION = 1;

const aad = (keyId: string, context: Record<string, string> = {}) =>
  Buffer.from(
    JSON.stringify([
      keyId,
      Object.keys(context)
        .sort()
        .map((k) => [k, context[k]]),
    ]),
  );

const error = (type: string, message: string) => ({ status: 400, body: { __type: type, message } });

export interface KeyPolicy {
  /** The key policy's statements (lib/access.ts `keyUseStatements`), as the stack writes them. */
  statements: Statement[];
  /** The principal an access key id stands for; undefined for the runtime's own (tests, scripts): not checked. */
  principalOf(accessKeyId: string): Request['principal'];
}

/** The access key id of a SigV4 `Authorization` header. */
const accessKeyIdOf = (authorization: string | undefined) => /Credential=([^/,\s]+)\//.exec(authorization ?? '')?.[1];

type Operation = (input: Record<string, any>) => { status: number; body: unknown };

/** Encrypt and Decrypt as KMS answers them: AES-256-GCM under the key, the encryption context as AAD. */
const kmsOperations = (keyMaterial: Buffer, keyId: string, calls: { Encrypt: number; Decrypt: number }) => {
  const operations: Record<string, Operation> = {
    Encrypt(input) {
      calls.Encrypt++;
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', keyMaterial, iv);
      cipher.setAAD(aad(keyId, input.EncryptionContext));
      const sealed = Buffer.concat([cipher.update(Buffer.from(input.Plaintext, 'base64')), cipher.final()]);
      const blob = Buffer.concat([Buffer.from([VERSION]), iv, cipher.getAuthTag(), sealed]);
      return { status: 200, body: { CiphertextBlob: blob.toString('base64'), KeyId: keyId } };
    },
    Decrypt(input) {
      calls.Decrypt++;
      const blob = Buffer.from(input.CiphertextBlob ?? '', 'base64');
      if (blob.length < 29 || blob[0] !== VERSION) return error('InvalidCiphertextException', 'invalid ciphertext');
      try {
        const decipher = createDecipheriv('aes-256-gcm', keyMaterial, blob.subarray(1, 13));
        decipher.setAAD(aad(keyId, input.EncryptionContext));
        decipher.setAuthTag(blob.subarray(13, 29));
        const plain = Buffer.concat([decipher.update(blob.subarray(29)), decipher.final()]);
        return { status: 200, body: { Plaintext: plain.toString('base64'), KeyId: keyId } };
      } catch {
        return error('InvalidCiphertextException', 'the ciphertext or its encryption context is wrong');
      }
    },
  };

  return operations;
};

/** The key policy's answer to a function's call: AWS's refusal, or undefined when it is allowed. */
const keyPolicyRefusal =
  (keyPolicy: KeyPolicy | undefined, keyId: string) =>
  (operation: string, authorization: string | undefined, input: Record<string, any>) => {
    const accessKeyId = accessKeyIdOf(authorization);
    const principal = keyPolicy && accessKeyId ? keyPolicy.principalOf(accessKeyId) : undefined;
    if (!principal) return undefined;
    const request: Request = {
      action: `kms:${operation}`,
      resource: keyId,
      principal,
      keys: encryptionContextKeys(input.EncryptionContext),
    };
    if (decide(keyPolicy!.statements, request) === 'allow') return undefined;
    const denial = accessDenied('kms', request, accessKeyId!, 'resource-based');
    console.error(
      JSON.stringify({ level: 'ERROR', message: 'local KMS: refused by the key policy', function: accessKeyId }),
    );
    return { status: denial.statusCode, body: JSON.parse(denial.body) };
  };

export const startKmsEmulator = async (options: {
  keyMaterial: Buffer;
  port?: number;
  keyPolicy?: KeyPolicy;
}): Promise<KmsEmulator> => {
  const keyId = 'arn:aws:kms:us-east-1:000000000000:key/local-secrets';
  const calls = { Encrypt: 0, Decrypt: 0 };

  const operations = kmsOperations(options.keyMaterial, keyId, calls);
  const refused = keyPolicyRefusal(options.keyPolicy, keyId);

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const target = String(req.headers['x-amz-target'] ?? '').replace('TrentService.', '');
      const operation = operations[target] as (typeof operations)[string] | undefined;
      let result: { status: number; body: unknown };
      if (!operation) result = error('UnsupportedOperationException', `${target} is not emulated`);
      else {
        try {
          const input = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
          result = refused(target, req.headers.authorization, input) ?? operation(input);
        } catch {
          result = error('SerializationException', 'bad request body');
        }
      }
      res.writeHead(result.status, { 'Content-Type': 'application/x-amz-json-1.1' });
      res.end(JSON.stringify(result.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    keyId,
    calls,
    stop: () => new Promise((resolve) => server.close(() => resolve())),
  };
};
