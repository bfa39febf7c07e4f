import { config } from '../core/config.js';
import { kms, kmsCipher } from './kms-cipher.js';

export const cipher = kmsCipher(kms, config.keyId);
