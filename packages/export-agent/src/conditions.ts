/** The ServiceExport condition types (KEP-1645); `setConditions` is core's. */
export const ConditionType = { Valid: 'Valid', Ready: 'Ready', Conflict: 'Conflict' } as const;
