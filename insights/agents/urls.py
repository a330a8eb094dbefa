from django.urls import path

from insights.agents import views

app_name = "agents"

urlpatterns = [
    path("", views.home, name="home"),
    path("scorecard/", views.scorecard, name="scorecard"),
    path("calls/<int:pk>/", views.call, name="call"),
    path("calls/<int:pk>/acknowledge/", views.acknowledge, name="acknowledge"),
    path("calls/<int:pk>/dispute/", views.dispute, name="dispute"),
    path("calls/<int:pk>/self-review/", views.self_review, name="self-review"),
    path("calls/<int:pk>/self-review/skip/", views.self_review_skip_view, name="self-review-skip"),
]
