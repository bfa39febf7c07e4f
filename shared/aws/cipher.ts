import { config } from '../core/config.js';
import { kms } from './kms.js';
import { kmsCipher } from './kms-cipher.js';

export const cipher = kmsCipher(kms, config.keyId);
