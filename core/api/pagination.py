from django.utils.translation import gettext_lazy as _
from rest_framework.exceptions import ValidationError
from rest_framework.pagination import PageNumberPagination


class ApiPagination(PageNumberPagination):
    """`?page=N`, and `?page_size=` up to 200 for systems that sync in bulk.

    A `page_size` that is not a whole number from 1 to 200 is a 400 on that field, as the schema
    says, rather than silently becoming the default size (DRF's own behaviour).
    """

    page_size_query_param = "page_size"
    max_page_size = 200

    def get_page_size(self, request) -> int:
        raw = request.query_params.get(self.page_size_query_param)
        if not raw:  # absent or empty (`?page_size=`): the default, as any empty query parameter
            return self.page_size
        if not (raw.isascii() and raw.isdigit() and 1 <= int(raw) <= self.max_page_size):
            message = _("Give a whole number from 1 to %(maximum)d.") % {"maximum": self.max_page_size}
            raise ValidationError({self.page_size_query_param: message})
        return int(raw)

    def get_schema_operation_parameters(self, view) -> list[dict]:
        parameters = super().get_schema_operation_parameters(view)
        for parameter in parameters:
            if parameter["name"] == self.page_query_param:
                parameter["schema"]["minimum"] = 1
            elif parameter["name"] == self.page_size_query_param:
                parameter["schema"].update(minimum=1, maximum=self.max_page_size)
        return parameters
