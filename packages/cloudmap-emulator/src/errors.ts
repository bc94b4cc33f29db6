/**
 * Cloud Map's error shapes as they travel on the wire (AWS JSON 1.1): `__type` carries the
 * bare shape name, which is all the SDKs dispatch on; extra modeled members ride along.
 *
 * Status codes: by default every modeled error answers 400, which is what the API reference
 * pages state and what real traffic shows (a NamespaceNotFound with StatusCode 400 is quoted
 * in external-dns#5180). The Smithy model says 404/409/429 for some shapes; `smithy` mode
 * switches to those, because only retry classification (429, 5xx) depends on the status.
 */
export type StatusMode = 'observed' | 'smithy';

const smithyStatus: Readonly<Record<string, number>> = {
  NamespaceNotFound: 404,
  ServiceNotFound: 404,
  InstanceNotFound: 404,
  OperationNotFound: 404,
  CustomHealthNotFound: 404,
  ResourceNotFoundException: 404,
  DuplicateRequest: 409,
  ResourceInUse: 409,
  RequestLimitExceeded: 429,
};

/** Any error the emulator answers with; `extra` holds the shape's members besides Message. */
export class CloudMapError extends Error {
  readonly code: string;
  readonly extra: Readonly<Record<string, unknown>>;
  /** Fixed status for protocol and injected errors; undefined means "a modeled error". */
  readonly fixedStatus: number | undefined;

  constructor(
    code: string,
    message: string,
    extra: Record<string, unknown> = {},
    fixedStatus?: number,
  ) {
    super(message);
    this.name = code;
    this.code = code;
    this.extra = extra;
    this.fixedStatus = fixedStatus;
  }

  status(mode: StatusMode): number {
    if (this.fixedStatus !== undefined) return this.fixedStatus;
    return mode === 'smithy' ? (smithyStatus[this.code] ?? 400) : 400;
  }

  /** Both `Message` (the modeled member) and `message` (what moto sends): clients read either. */
  body(): Record<string, unknown> {
    return { __type: this.code, Message: this.message, message: this.message, ...this.extra };
  }
}

export class InvalidInput extends CloudMapError {
  constructor(message: string) {
    super('InvalidInput', message);
  }
}
export class NamespaceNotFound extends CloudMapError {
  constructor(message = 'Namespace not found') {
    super('NamespaceNotFound', message);
  }
}
export class ServiceNotFound extends CloudMapError {
  constructor(message = 'Service not found') {
    super('ServiceNotFound', message);
  }
}
export class InstanceNotFound extends CloudMapError {
  constructor(message = 'Instance not found') {
    super('InstanceNotFound', message);
  }
}
export class OperationNotFound extends CloudMapError {
  constructor(message = 'Operation not found') {
    super('OperationNotFound', message);
  }
}
export class CustomHealthNotFound extends CloudMapError {
  constructor(message = 'Custom health check not found') {
    super('CustomHealthNotFound', message);
  }
}
export class ResourceNotFoundException extends CloudMapError {
  constructor(message = 'Resource not found') {
    super('ResourceNotFoundException', message);
  }
}
export class NamespaceAlreadyExists extends CloudMapError {
  constructor(
    message: string,
    existing: { NamespaceId: string; CreatorRequestId?: string | undefined },
  ) {
    super('NamespaceAlreadyExists', message, { ...existing });
  }
}
export class ServiceAlreadyExists extends CloudMapError {
  constructor(
    message: string,
    existing: { ServiceId: string; ServiceArn: string; CreatorRequestId?: string | undefined },
  ) {
    super('ServiceAlreadyExists', message, { ...existing });
  }
}
export class ResourceInUse extends CloudMapError {
  constructor(message: string) {
    super('ResourceInUse', message);
  }
}
export class DuplicateRequest extends CloudMapError {
  constructor(message: string, duplicateOperationId: string) {
    super('DuplicateRequest', message, { DuplicateOperationId: duplicateOperationId });
  }
}
export class ResourceLimitExceeded extends CloudMapError {
  constructor(message: string) {
    super('ResourceLimitExceeded', message);
  }
}
export class TooManyTagsException extends CloudMapError {
  constructor(message: string, resourceName: string) {
    super('TooManyTagsException', message, { ResourceName: resourceName });
  }
}
/** The unmodeled common error for control-plane throttling: HTTP 400, "Rate exceeded". */
export class ThrottlingException extends CloudMapError {
  constructor() {
    super('ThrottlingException', 'Rate exceeded', {}, 400);
  }
}
/** Data-plane throttling (DiscoverInstances*), modeled; 429 only in smithy mode. */
export class RequestLimitExceeded extends CloudMapError {
  constructor() {
    super('RequestLimitExceeded', 'Rate exceeded');
  }
}
export class UnknownOperationException extends CloudMapError {
  constructor(target: string) {
    super('UnknownOperationException', `Unknown operation ${target}`, {}, 400);
  }
}
export class SerializationException extends CloudMapError {
  constructor(message: string) {
    super('SerializationException', message, {}, 400);
  }
}
/** Injected server-side failures: 500 InternalFailure or 503 ServiceUnavailable. */
export class InjectedServerError extends CloudMapError {
  constructor(status: number) {
    const code = status === 503 ? 'ServiceUnavailable' : 'InternalFailure';
    super(code, `Injected ${status} by the emulator's admin API`, {}, status);
  }
}
/** A bug in the emulator itself, answered the way AWS answers its own failures. */
export class InternalFailure extends CloudMapError {
  constructor() {
    super('InternalFailure', 'The emulator failed to handle the request', {}, 500);
  }
}
