// ParleyAppsTests
