// ParleyStoreTests: tests for this module live in this folder.
