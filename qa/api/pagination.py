from rest_framework.pagination import PageNumberPagination


class ApiPagination(PageNumberPagination):
    """`?page=N`, and `?page_size=` up to 200 for systems that sync in bulk."""

    page_size_query_param = "page_size"
    max_page_size = 200
