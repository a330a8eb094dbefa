from django.urls import path

from coaching import views

app_name = "coaching"

urlpatterns = [
    path("", views.session_index, name="list"),
    path("new/", views.session_new, name="new"),
    path("<int:pk>/", views.session_detail, name="detail"),
    path("<int:pk>/close/", views.session_close, name="close"),
    path("mine/", views.mine, name="mine"),
    path("mine/<int:pk>/", views.mine_detail, name="mine-detail"),
    path("mine/<int:pk>/acknowledge/", views.mine_acknowledge, name="mine-acknowledge"),
]
