#include "paired.hpp"
