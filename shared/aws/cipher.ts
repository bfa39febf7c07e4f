import { config } from '../config.js';
import { kmsCipher } from '../secrets.js';
import { kms } from './kms.js';

export const cipher = kmsCipher(kms, config.keyId);
