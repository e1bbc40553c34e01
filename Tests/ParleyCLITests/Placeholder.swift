// ParleyCLITests
