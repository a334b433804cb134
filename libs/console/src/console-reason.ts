/** The reasons the console itself answers with; refusals of the services it calls keep their own reasons. */
export const ConsoleReason = {
  /** A page size, cell count or message count past its bound (the bound is in the message). */
  CONSOLE_LIMIT_EXCEEDED: 'CONSOLE_LIMIT_EXCEEDED',
  /** A page token the console did not hand out, or one from another listing. */
  CONSOLE_BAD_PAGE_TOKEN: 'CONSOLE_BAD_PAGE_TOKEN',
  /** An offset or time that is negative, or a browse with neither. */
  CONSOLE_BAD_START: 'CONSOLE_BAD_START',
  /** A browse, subscription or produce names a partitioned topic as a whole: name one partition (`<topic>-partition-<n>`). */
  CONSOLE_PARTITION_REQUIRED: 'CONSOLE_PARTITION_REQUIRED',
  /** The subscription does not exist on the topic. */
  CONSOLE_SUBSCRIPTION_NOT_FOUND: 'CONSOLE_SUBSCRIPTION_NOT_FOUND',
  /** The browse offset is past the topic's end; the details name the next offset. */
  CONSOLE_OFFSET_PAST_END: 'CONSOLE_OFFSET_PAST_END',
  /** The console was started without the address of the service the page needs (collector, Kafka gateway). */
  CONSOLE_SERVICE_NOT_CONFIGURED: 'CONSOLE_SERVICE_NOT_CONFIGURED',
  /** The Kafka gateway answered a request with a Kafka error code (named in the message). */
  CONSOLE_KAFKA_ERROR: 'CONSOLE_KAFKA_ERROR',
} as const;
