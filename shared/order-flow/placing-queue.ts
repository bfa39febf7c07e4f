import { config } from '../core/config.js';
import { sendWork } from '../work/runner.js';
import type { JobMessage } from './placing-message.js';

/** One message per job on the sync queue, ten to a SendMessageBatch. Throws if any entry was refused. */
export const enqueueJobs = (messages: JobMessage[], delaySeconds = 0) =>
  sendWork(config.syncQueueUrl(), messages, delaySeconds);
