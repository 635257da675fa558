// Errors as the service's engine (Chakra) has them, shared by stored
// procedures, triggers and user-defined functions: evaluated first in each
// fresh context, it makes `Error` accept `new Error(number, message)`
// (`number` becomes the response's substatus) and returns `describe`, which
// turns any thrown value into the record `engine.rs` reads.
(function (global) {
  'use strict';
  const NativeError = global.Error;
  const stringify = JSON.stringify;

  function CosmosError(first, second) {
    const numbered = typeof first === 'number' && arguments.length > 1;
    const error = new NativeError(numbered ? second : first);
    if (numbered) error.number = first;
    Object.setPrototypeOf(error, new.target ? new.target.prototype : CosmosError.prototype);
    return error;
  }
  CosmosError.prototype = NativeError.prototype;
  Object.defineProperty(NativeError.prototype, 'constructor', {
    value: CosmosError, writable: true, configurable: true,
  });
  global.Error = CosmosError;

  function describe(thrown) {
    try {
      if (thrown instanceof NativeError) {
        return {
          error: true,
          name: String(thrown.name),
          message: String(thrown.message),
          number: typeof thrown.number === 'number' ? thrown.number : undefined,
          stack: typeof thrown.stack === 'string' ? thrown.stack : undefined,
        };
      }
      let text;
      if (typeof thrown === 'string') text = thrown;
      else {
        try { text = stringify(thrown); } catch (e) { text = undefined; }
        if (text === undefined) text = String(thrown);
      }
      const number = thrown !== null && typeof thrown === 'object' && typeof thrown.number === 'number'
        ? thrown.number : undefined;
      return { error: false, message: text, number: number };
    } catch (e) {
      return { error: false, message: '(a value that cannot be printed)' };
    }
  }

  return { NativeError: NativeError, describe: describe };
})
