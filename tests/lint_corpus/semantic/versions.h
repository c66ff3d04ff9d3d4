// Constants defined away from the requests that use them.
#pragma once
constexpr int kAllocAbi = 2000;
constexpr int kFreeAbi = 3020;
enum DriverAbi { kCtxAbi = 3020 };
