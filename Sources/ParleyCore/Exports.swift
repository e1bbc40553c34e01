// Code using the engine also speaks the app API (intents, options, results).
@_exported import ParleyIntents
// The device states and button gestures the engine emits and receives are
// ParleyDevice's, shared with ParleyHardware; users of the engine get them too.
@_exported import ParleyDevice
