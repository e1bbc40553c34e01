// ParleyCoreTests
