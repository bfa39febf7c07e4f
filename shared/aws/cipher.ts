import { config } from '../core/config.js';
import { kmsCipher } from './kms-cipher.js';
import { kms } from './kms.js';

export const cipher = kmsCipher(kms, config.keyId);
