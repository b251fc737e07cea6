#include <onic/status.h>

__attribute__((cold, noinline)) const char *onic_status_str(onic_status_t status)
{
    switch (status) {
    case ONIC_OK:                return "success";
    case ONIC_INPROGRESS:        return "operation in progress";
    case ONIC_ERR_NO_MEMORY:     return "out of memory";
    case ONIC_ERR_NO_RESOURCE:   return "resource exhausted (queue or table full)";
    case ONIC_ERR_INVALID_PARAM: return "invalid parameter";
    case ONIC_ERR_NO_ELEM:       return "no such element";
    case ONIC_ERR_TRUNCATED:     return "message truncated";
    case ONIC_ERR_UNSUPPORTED:   return "operation not supported";
    case ONIC_ERR_IO:            return "input/output error";
    case ONIC_ERR_LAST:          break;
    }
    return "unknown status";
}
