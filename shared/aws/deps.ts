import type { AdapterFor } from '../platforms/port.js';
import type { SecretCipher } from './kms-cipher.js';

/**
 * What use cases are handed instead of importing: each handler builds its `deps` once, at module
 * scope, from what it uses (`{ cipher }`, or `{ cipher, platforms: adapterFor }` for the workers),
 * so a bundle carries no adapter it never calls, and a unit test swaps an adapter by passing
 * another. The SDK clients are not in it: they stay at module scope (shared/aws, shared/dynamo)
 * and unit tests mock them with aws-sdk-client-mock.
 */
export interface Deps {
  /** Encrypts and decrypts store secrets (KMS: shared/aws/kms-cipher.ts). */
  cipher: SecretCipher;
  /** The platform adapter of each platform kind (shared/platforms/adapters.ts). */
  platforms: AdapterFor;
}
