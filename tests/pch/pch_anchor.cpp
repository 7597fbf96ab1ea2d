// Anchor of the precompiled header the tests share (tests/CMakeLists.txt).
