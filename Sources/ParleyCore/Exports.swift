// Code using the engine also speaks the app API (intents, options, results).
@_exported import ParleyIntents
