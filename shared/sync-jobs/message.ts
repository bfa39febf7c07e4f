/**
 * What a sync-queue message carries: which job, and which enqueue of it. No SDK here: the DLQ
 * handler reads messages without sending any.
 */
export interface JobMessage {
  jobId: string;
  generation: number;
}

export const parseJobMessage = (body: string): JobMessage | undefined => {
  try {
    const parsed = JSON.parse(body);
    if (typeof parsed?.jobId === 'string' && Number.isInteger(parsed?.generation))
      return { jobId: parsed.jobId, generation: parsed.generation };
  } catch {
    // fall through: a malformed message can never be processed
  }
  return undefined;
};
