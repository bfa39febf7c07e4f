import { ATTEMPT_TRIGGERS, type AttemptTrigger } from './attempts.js';

/**
 * What a sync-queue message carries: which job, which generation of it (an older one is stale),
 * and what sent it, for the attempt history. No SDK here: the DLQ handler reads messages without
 * sending any.
 */
export interface JobMessage {
  jobId: string;
  generation: number;
  /** Absent in messages from before the history: they came from the webhook. */
  trigger?: AttemptTrigger;
}

export const parseJobMessage = (body: string): JobMessage | undefined => {
  try {
    const parsed = JSON.parse(body);
    if (typeof parsed?.jobId === 'string' && Number.isInteger(parsed?.generation)) {
      const trigger = ATTEMPT_TRIGGERS.find((t) => t === parsed.trigger);
      return { jobId: parsed.jobId, generation: parsed.generation, ...(trigger ? { trigger } : {}) };
    }
  } catch {
    // fall through: a malformed message can never be processed
  }
  return undefined;
};
