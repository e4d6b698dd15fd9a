"""The cell magic's argument checks under their earlier module name (see ``mediagen.magics``)."""

from mediagen.magics._cell_line import (  # noqa: F401
    CELL_USAGE,
    CellOptions,
    MagicUsageError,
    check_identifier,
    did_you_mean,
    parse_bool,
    parse_cell_line,
)
from mediagen.magics._request import (  # noqa: F401
    accepted_fields,
    allowed_values,
    build_request,
    choose_model,
    modes_of,
    prompt_field,
)
from mediagen.magics._values import convert_value  # noqa: F401
